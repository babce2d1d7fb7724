"""python train.py [task=mc|span|dg] [model=...] [data=...] [attack=...] [trainer=...] [key=value ...]

The same as ``robust-mrc train ...`` (:mod:`robust_mrc.cli.train`). A mistake in the command line,
the config or the data prints one line, ``Error: <message>``, and exits with status 1;
``HYDRA_FULL_ERROR=1 python train.py ...`` shows the whole traceback.
"""

from robust_mrc.cli.train import main

if __name__ == "__main__":
    main()
