#!/bin/bash
exec g++ "$@" -fno-exceptions
