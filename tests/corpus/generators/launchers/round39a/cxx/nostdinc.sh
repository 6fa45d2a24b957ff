#!/bin/bash
# Compiler without the C++ standard library headers: g++ -nostdinc++ (system C headers stay visible).
exec g++ -nostdinc++ "$@"
