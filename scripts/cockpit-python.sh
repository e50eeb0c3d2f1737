#!/bin/sh
# Prints the Python to install and run the cockpit with (the README's two set-up commands use it):
# - python3 itself when pip may install into it: a venv, a conda env, a Python of your own;
# - else ./.venv, made from python3 with the system site-packages visible, on a distribution's
#   Python that PEP 668 marks as externally managed (Debian 12, Ubuntu 24.04: pip refuses there).
#   Made once; apt's python3-venv is installed first where it is missing (as root).
# The gates then find the Python that has your CUDA torch on their own (cockpit/gates/interpreter.py,
# or [gates] python in cockpit.toml), whichever of these the cockpit runs in.
set -e
if python3 -c 'import os, sys, sysconfig
marked = os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
sys.exit(1 if marked and sys.prefix == sys.base_prefix else 0)'; then
  command -v python3
  exit 0
fi
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
  if ! python3 -m venv --system-site-packages .venv >&2; then
    echo "cockpit: python3 -m venv needs apt's python3-venv; installing it" >&2
    apt-get update -qq >&2 && apt-get install -y -qq python3-venv >&2
    python3 -m venv --system-site-packages .venv >&2
  fi
fi
echo "$PWD/.venv/bin/python"
