"""python evaluate.py ckpt_path=path/to/best.ckpt [task=span] [data=...] [split=test|validation]

The same as ``robust-mrc evaluate ...`` (:mod:`robust_mrc.cli.evaluate`). A mistake in the command
line, the config or the data prints one line, ``Error: <message>``, and exits with status 1;
``HYDRA_FULL_ERROR=1 python evaluate.py ...`` shows the whole traceback.
"""

from robust_mrc.cli.evaluate import main

if __name__ == "__main__":
    main()
