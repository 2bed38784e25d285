#!/usr/bin/env bash
# Installs kernelkit's optional fast backends where it can: Debian's OpenBLAS
# (matrix products) and FFTW 3 in single and double precision (the FFTs of
# the native training engine's Toeplitz products), as root or through sudo
# on a machine with apt-get. Everywhere else it says so and exits 0 —
# kernelkit then runs on gonum's pure-Go BLAS and FFT.
set -u
have() { ldconfig -p 2>/dev/null | grep -q "$1" || [ -e "/usr/lib/x86_64-linux-gnu/$1" ] || [ -e "/usr/lib/aarch64-linux-gnu/$1" ]; }
want=()
have libopenblas.so.0 || want+=(libopenblas-dev)
have libfftw3f.so.3 || want+=(libfftw3-single3)
have libfftw3.so.3 || want+=(libfftw3-double3)
if [ ${#want[@]} -eq 0 ]; then
  echo "setup: OpenBLAS and FFTW already installed"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: no apt-get here; install ${want[*]} yourself for the fast backends (pure Go works without them)"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup: not root and no sudo; skipping ${want[*]} (pure Go works without them)"; exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${want[@]}" >/dev/null; then
  echo "setup: installed ${want[*]}"
else
  echo "setup: could not install ${want[*]}; kernelkit will use pure Go where they are missing"
fi
exit 0
