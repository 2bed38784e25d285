#!/usr/bin/env bash
# Installs kernelkit's optional fast BLAS backend (Debian's OpenBLAS) where it
# can: as root or through sudo on a machine with apt-get. Everywhere else it
# says so and exits 0 — kernelkit then runs on gonum's pure-Go BLAS.
set -u
if [ -e /usr/lib/x86_64-linux-gnu/libopenblas.so.0 ] || [ -e /usr/lib/aarch64-linux-gnu/libopenblas.so.0 ] || ldconfig -p 2>/dev/null | grep -q libopenblas.so.0; then
  echo "setup: OpenBLAS already installed"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: no apt-get here; install OpenBLAS yourself for the fast backend (pure Go works without it)"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup: not root and no sudo; skipping OpenBLAS (pure Go works without it)"; exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if $SUDO apt-get update -qq && $SUDO apt-get install -y -qq libopenblas-dev >/dev/null; then
  echo "setup: installed libopenblas-dev"
else
  echo "setup: could not install libopenblas-dev; kernelkit will use pure-Go BLAS"
fi
exit 0
