"""The jobs the entry points run: ``train(cfg)`` (:mod:`robust_mrc.jobs.train`) and ``evaluate(cfg)``
(:mod:`robust_mrc.jobs.evaluate`); plain functions of a composed config that tests call directly."""
