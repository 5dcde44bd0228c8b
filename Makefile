# Two set-up commands on a fresh machine: `make preview STACK=dev` and `make test`.
# Each creates .venv and installs the pinned requirements when they are missing or changed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Every target runs Python with the project's bytecode cached under .venv/pycache: where the environment sets
# PYTHONDONTWRITEBYTECODE (this workplace's machines do), each run, and each `python -m stackplan` process of the
# test suite, would otherwise compile the whole project again (about 0.4 s a process).
RUN := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(CURDIR)/$(VENV)/pycache $(PY)
# pip writes the installed packages' bytecode beside their sources, where Python does not look once
# PYTHONPYCACHEPREFIX is set: each install step compiles the environment into .venv/pycache too (compileall skips
# what is up to date), or a fresh clone's first preview and every test worker compile pulumi, the provider SDK and
# the rest themselves (about 10 s of CPU a worker).
COMPILE_ENV = $(RUN) -m compileall -q -j 0 "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
STACK ?= dev
ARGS ?=

.PHONY: install preview check cost test test-spark test-train test-slow lint docs docs-serve docs-reference schema sdk-types terraform-docs bench bench-record clean

# The last step installs the `stackplan` command (pyproject's [project.scripts]): an editable install of this checkout.
$(VENV)/.installed-runtime: requirements.txt requirements-build.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-build.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(COMPILE_ENV)
	touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt requirements-spark.txt $(VENV)/.installed-runtime
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	$(COMPILE_ENV)
	touch $@

$(VENV)/.installed-bench: requirements-bench.txt $(VENV)/.installed-dev
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-bench.txt
	$(COMPILE_ENV)
	touch $@

install: $(VENV)/.installed-runtime  ## the runtime virtualenv (.venv) that Pulumi.yaml points at

preview: $(VENV)/.installed-runtime  ## offline preview of a stack: resources, violations, costs
	$(RUN) -m stackplan preview --stack $(STACK) $(ARGS)

check: $(VENV)/.installed-runtime  ## policy check of a stack (exit 1 on a mandatory violation)
	$(RUN) -m stackplan check --stack $(STACK) $(ARGS)

cost: $(VENV)/.installed-runtime  ## cost report of a stack
	$(RUN) -m stackplan cost --stack $(STACK) $(ARGS)

# The test suite runs on TEST_WORKERS processes (pytest-xdist; every test writes only under its own tmp_path).
TEST_WORKERS ?= 2
PYTEST := $(RUN) -m pytest -n $(TEST_WORKERS) --dist worksteal

test: $(VENV)/.installed-dev  ## the test suite, without the tests that start Spark (CI runs both targets); ARGS: more pytest arguments
	$(PYTEST) -m "not spark" $(ARGS)

# advise on Apache Spark (issue 29): each test starts a JVM and runs the analysis, minutes, not seconds; kept out of
# `make test` so that the everyday suite stays fast (issue 23), run by CI on every change.
# One process, one JVM: the Spark tests share a session (module-scoped), and two workers each starting a JVM on this
# 2-core machine took 170 s where one process takes 115 s.
test-spark: $(VENV)/.installed-dev  ## the tests that run advise's SQL on a local Spark (what CI runs after make test)
	$(RUN) -m pytest -n 0 -m spark $(ARGS)

# The training entry point (dbx_ai_infra/workloads/train.py) on PyTorch: a virtualenv of its own with the CPU build of torch
# (requirements-train.txt), so .venv and `make test` stay without it (issue 52 item 9: PyPI's torch is the CUDA
# build, gigabytes). Its tests skip in `make test`; this target runs them, without the suite's conftest (which
# needs the Pulumi SDK). CI runs it.
TRAIN_VENV ?= .venv-train
$(TRAIN_VENV)/.installed: requirements-train.txt
	test -x $(TRAIN_VENV)/bin/python || $(PYTHON) -m venv $(TRAIN_VENV)
	$(TRAIN_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-train.txt
	touch $@

test-train: $(TRAIN_VENV)/.installed  ## the training entry point's tests on PyTorch's CPU build (CI runs them)
	$(TRAIN_VENV)/bin/python -m pytest -p no:cacheprovider --noconftest tests/test_train_torch.py $(ARGS)

lint: $(VENV)/.installed-dev  ## static gates: ruff, mypy (pydantic plugin), import-linter layering contracts
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(VENV)/bin/zizmor --offline --no-progress .github/workflows

# The site is written to site/ (git-ignored): open site/index.html. `make docs-serve` serves the pages instead and
# rebuilds them as they are edited (DOCS_ADDR: where it listens).
DOCS_ADDR ?= 127.0.0.1:8000

docs: $(VENV)/.installed-dev  ## the docs site, built strictly (CI runs it) into site/ (git-ignored: open site/index.html)
	$(RUN) docs/gen_reference.py --check
	$(VENV)/bin/mkdocs build --strict --quiet --site-dir site

docs-serve: $(VENV)/.installed-dev  ## the docs site served at http://$(DOCS_ADDR), rebuilt on each edit (mkdocs serve)
	$(VENV)/bin/mkdocs serve --strict --dev-addr $(DOCS_ADDR)

docs-reference: $(VENV)/.installed-dev  ## regenerate docs/reference/ from the code (stack fields, policy index, CLI, advise findings)
	$(RUN) docs/gen_reference.py

schema: $(VENV)/.installed-runtime  ## regenerate docs/plan.schema.json from the typed plan
	$(PY) -c "import json; from dbx_ai_infra.dbxtypes.plan import plan_json_schema; print(json.dumps(plan_json_schema(), indent=2, sort_keys=True))" > docs/plan.schema.json

terraform-docs: $(VENV)/.installed-runtime  ## regenerate dbx_ai_infra/dbxtypes/data/terraform_provider_docs.json from a clone (TF_PROVIDER_REPO=DIR)
	$(PY) -m dbx_ai_infra.dbxtypes.terraform_docs $(TF_PROVIDER_REPO) > dbx_ai_infra/dbxtypes/data/terraform_provider_docs.json.tmp && mv dbx_ai_infra/dbxtypes/data/terraform_provider_docs.json.tmp dbx_ai_infra/dbxtypes/data/terraform_provider_docs.json

sdk-types: $(VENV)/.installed-runtime  ## regenerate dbx_ai_infra/dbxtypes/data/sdk_types.json from the pinned databricks-sdk
	$(PY) -m dbx_ai_infra.dbxtypes.sdk_snapshot > dbx_ai_infra/dbxtypes/data/sdk_types.json.tmp && mv dbx_ai_infra/dbxtypes/data/sdk_types.json.tmp dbx_ai_infra/dbxtypes/data/sdk_types.json

test-slow: $(VENV)/.installed-dev  ## every test: long property-test runs, Spark, Spark Connect
	HYPOTHESIS_PROFILE=slow $(PYTEST)

bench: $(VENV)/.installed-bench  ## benchmarks: prints figures, writes bench/RESULTS.latest.md (git-ignored)
	$(RUN) bench/run.py

bench-record: $(VENV)/.installed-bench  ## benchmarks, replacing the committed bench/RESULTS.md
	$(RUN) bench/run.py --record

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
