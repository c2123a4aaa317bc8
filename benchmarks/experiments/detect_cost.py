"""What detecting the GPUs costs in the CLI process (issue 16: `kt tune`'s start-up), step by step, each
in a fresh process: importing torch, CUDA's initialisation and the device properties through torch,
nvidia-smi for the driver version, and the same facts read through the CUDA driver API and NVML with
ctypes (no torch). Prints one JSON line per way.

    python benchmarks/experiments/detect_cost.py
"""

import json
import subprocess
import sys
import time

WAYS = {
    "import torch": "import torch",
    "torch: import + devices": "import torch\nn = torch.cuda.device_count()\n"
                               "[torch.cuda.get_device_properties(i) for i in range(n)]",
    "nvidia-smi driver version": "import subprocess\nsubprocess.run(['nvidia-smi', '--query-gpu=driver_version', "
                                 "'--format=csv,noheader'], capture_output=True)",
    "driver API + NVML (ctypes)": """
import ctypes
cuda = ctypes.CDLL('libcuda.so.1')
assert cuda.cuInit(0) == 0
count = ctypes.c_int()
cuda.cuDeviceGetCount(ctypes.byref(count))
for i in range(count.value):
    dev, name, value, mem = ctypes.c_int(), ctypes.create_string_buffer(256), ctypes.c_int(), ctypes.c_size_t()
    cuda.cuDeviceGet(ctypes.byref(dev), i)
    cuda.cuDeviceGetName(name, 256, dev)
    for attribute in (16, 38, 75, 76):
        cuda.cuDeviceGetAttribute(ctypes.byref(value), attribute, dev)
    cuda.cuDeviceTotalMem_v2(ctypes.byref(mem), dev)
nvml = ctypes.CDLL('libnvidia-ml.so.1')
nvml.nvmlInit_v2()
version = ctypes.create_string_buffer(80)
nvml.nvmlSystemGetDriverVersion(version, 80)
""",
}


def main():
    for name, code in WAYS.items():
        times = []
        for _ in range(3):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times.append(time.perf_counter() - started)
        print(json.dumps({"way": name, "seconds": sorted(times), "note": "fresh process, interpreter start included"}))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    print(json.dumps({"way": "bare interpreter", "seconds": [time.perf_counter() - started]}))


if __name__ == "__main__":
    main()
