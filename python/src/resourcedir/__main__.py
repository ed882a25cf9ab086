"""python -m resourcedir ARGS: the bundled binary with ARGS."""

from ._binary import main

if __name__ == "__main__":
    main()
