"""NVIDIA vendor plugin for kt: targets, devices, peak tables, cross-compilation, resources, timers."""
