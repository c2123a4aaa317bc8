"""AMD vendor plugin for kt: Instinct targets, peak tables, cross-compilation, resources, timers."""
