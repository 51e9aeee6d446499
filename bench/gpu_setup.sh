#!/bin/bash
# Prepare a bare, offline GPU machine for bench/eval_gpu.py and print what rendering will use.
# Usage, from the repository root (carry .gl and .gpu_bundle, see bench/gpu_bundle.py):
#   source bench/gpu_setup.sh [BUNDLE_DIR [PREFIX]]
# BUNDLE_DIR defaults to .gpu_bundle and PREFIX to /tmp/site; a second suite's bundle (e.g. one built with
# --out .gpu_bundle_l10) goes under its own PREFIX, in its own shell, since each bundle holds one suite's files.
# .gl holds the glvnd loader packages (libegl1 libglvnd0 libgl1 libglx0 libopengl0 libgles2 libvulkan1,
# fetched with `apt-get download`); .gpu_bundle holds LIBERO for one suite.
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
source "${1:-.gpu_bundle}/unpack.sh" "${2:-/tmp/site}" || return 1 2>/dev/null || exit 1
# Byte-compile once, before any measured run: the bundle and the copied tree come without .pyc files, so
# otherwise a fresh machine's first run has each of its 30 workers compile the same modules as it starts
# (that run reached its first policy call ~19 s later than the next one; the cause is not yet measured).
python3 -m compileall -q -j 0 "${2:-/tmp/site}" eval_runner rlinf_bench bench > /dev/null 2>&1 || true
export MUJOCO_GL=egl PYOPENGL_PLATFORM=egl PYTHONUNBUFFERED=1
# glvnd finds NVIDIA's EGL only through a vendor file (without one, EGL has no GPU device).
vendor=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
if [ -f "$vendor" ]; then
  export __EGL_VENDOR_LIBRARY_FILENAMES="$vendor"
elif ! ls /usr/share/glvnd/egl_vendor.d/*nvidia* >/dev/null 2>&1; then
  mkdir -p /usr/share/glvnd/egl_vendor.d
  printf '{"file_format_version":"1.0.0","ICD":{"library_path":"libEGL_nvidia.so.0"}}\n' \
    > /usr/share/glvnd/egl_vendor.d/10_nvidia.json
fi
nvlib=$(find /usr/local/nvidia /usr/lib /lib /usr/lib64 -name 'libEGL_nvidia.so.0' 2>/dev/null | head -1)
[ -n "$nvlib" ] && export LD_LIBRARY_PATH="$(dirname "$nvlib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "gpu_setup: EGL vendor ${__EGL_VENDOR_LIBRARY_FILENAMES:-/usr/share/glvnd/egl_vendor.d} nvidia EGL ${nvlib:-not found}" \
  "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset} MUJOCO_EGL_DEVICE_ID=${MUJOCO_EGL_DEVICE_ID:-unset}"
timeout 60 python3 -c "from eval_runner.egl import query_egl_cuda_ordinals as q; print('gpu_setup: EGL devices (CUDA ordinal each):', q())"
