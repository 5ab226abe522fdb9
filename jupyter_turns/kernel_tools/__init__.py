"""The built-in tools that need the kernel: run_python, figures, reading, editing."""
