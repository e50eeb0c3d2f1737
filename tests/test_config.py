"""cockpit.toml: defaults without a file; every mistake named by file:line and key path."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.config import ConfigError, load_config


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "cockpit.toml").write_text(text, encoding="utf-8")
    return tmp_path


def test_no_file_gives_the_seed_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.status_every_s == 150
    assert config.phase_warn_fraction == 0.8
    optimize = [(p.name, p.budget_s / 60) for p in config.template("optimize").phases]
    assert optimize == [("Environment", 10), ("Baseline", 20), ("Profile", 30), ("Fix", 90),
                        ("Evaluate", 20), ("Document", 20)]
    baseline = [(p.name, p.budget_s / 60) for p in config.template("baseline").phases]
    assert baseline == [("Environment", 10), ("Baseline", 15), ("Document", 5)]


def test_values_and_custom_templates_are_read(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, """
gpu_cost_per_hour = 2.5
default_template = "quick"

[cadence]
status_every_s = 1.5

[thresholds]
phase_warn_fraction = 0.9

[templates.quick]
phases = [{ name = "Build", budget_min = 5 }, { name = "Bench", budget_min = 2.5 }]
"""))
    assert config.status_every_s == 1.5
    assert config.gpu_cost_per_hour == 2.5
    assert config.phase_warn_fraction == 0.9
    assert [(p.name, p.budget_s) for p in config.template(None).phases] == [
        ("Build", 300), ("Bench", 150)]


def test_a_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    write(tmp_path, "[cadence]\nstatus_every_s = 150\nthis is not toml\n")
    with pytest.raises(ConfigError, match=r"cockpit\.toml:3: TOML syntax error"):
        load_config(tmp_path)


def test_an_unknown_key_names_its_path_line_and_the_allowed_keys(tmp_path: Path) -> None:
    write(tmp_path, "[cadence]\nstatus_every_s = 150\nstatus_evry = 3\n")
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path)
    message = str(err.value)
    assert "cockpit.toml:3: cadence.status_evry: unknown key" in message
    assert "allowed here: status_every_s" in message


@pytest.mark.parametrize(("text", "expected"), [
    ("[cadence]\nstatus_every_s = 0\n", r"cockpit\.toml:2: cadence\.status_every_s: 0 is not allowed \(expected a number of seconds > 0"),
    ("[cadence]\nstatus_every_s = \"often\"\n", r"cadence\.status_every_s: 'often' is not allowed"),
    ("gpu_cost_per_hour = -1\n", r"cockpit\.toml:1: gpu_cost_per_hour: -1 is not allowed"),
    ("[thresholds]\nphase_warn_fraction = 1.5\n", r"thresholds\.phase_warn_fraction: 1\.5 is not allowed \(expected a fraction"),
    ("default_template = \"fast\"\n", r"default_template: 'fast' is not a template \(allowed: baseline, optimize\)"),
    ("[templates.quick]\nphases = []\n", r"cockpit\.toml:2: templates\.quick\.phases: must be a non-empty list"),
    ("[templates.quick]\nphases = [{ name = \"A\", budget_min = 0 }]\n", r"budget_min 0 must be minutes > 0"),
    ("[templates.quick]\nphases = [{ name = \"A\", budget_min = 1 }, { name = \"a\", budget_min = 1 }]\n", r"phase 'a' appears twice"),
    ("[templates.\"../x\"]\nphases = [{ name = \"A\", budget_min = 1 }]\n", r"template names use lowercase"),
    ("cadence = 5\n", r"cadence: must be a table"),
    ("[thresholds]\ntolerated_clock_events = [\"power\"]\n",
     r"cockpit\.toml:2: thresholds\.tolerated_clock_events: \['power'\] is not allowed \(expected a list drawn from \['app clock setting', 'power cap'"),
    ("[thresholds]\nsm_clock_fraction = 0\n", r"thresholds\.sm_clock_fraction: 0 is not allowed"),
    ("[thresholds]\nvalidity = \"lenient\"\n",
     r"cockpit\.toml:2: thresholds\.validity: 'lenient' is not allowed \(expected \"comparable\", the default, or \"strict\""),
    ("[thresholds]\nclock_difference = 0\n", r"thresholds\.clock_difference: 0 is not allowed \(expected a fraction in \(0, 1\)"),
    ("[thresholds]\nslowdown_fraction = 2\n", r"thresholds\.slowdown_fraction: 2 is not allowed"),
    ("[gates]\ndevice = \"cuda:1\"\n",
     r"cockpit\.toml:2: gates\.device: 'cuda:1' is not a GPU \(expected a GPU UUID such as \"GPU-bb9154e7-"),
    ("[gates]\ndevice = -1\n", r"cockpit\.toml:2: gates\.device: -1 is not a GPU"),
    ("[gates]\ndevice = \"GPU-bb9154e7\"\n", r"gates\.device: 'GPU-bb9154e7' is not a GPU"),
    ("[gates.bnech]\ntimeout_s = 5\n", r"cockpit\.toml:1: gates\.bnech: unknown gate \(allowed: device, env, build"),
    ("[workload]\nragged_seq_lens = [0, 17]\n", r"workload\.ragged_seq_lens: the shapes, dtypes and tolerance now live in the workload module"),
    ("[workload]\nmodule = \"a.py\"\ngpumode = \"p\"\n", r"workload\.gpumode: name one workload: module or gpumode, not both"),
    ("[profile]\nhead_dim = 64\n", r"profile\.head_dim: the shape the profile runs is now the workload's Profile"),
    ("[workload]\nsettle_ms = -5\n", r"workload\.settle_ms: -5 is not allowed \(expected milliseconds from 0 to 5000"),
    ("[workload]\nrounds = 0\n", r"workload\.rounds: 0 is not allowed \(expected a whole number >= 1"),
])
def test_bad_values_say_what_is_allowed(tmp_path: Path, text: str, expected: str) -> None:
    write(tmp_path, text)
    with pytest.raises(ConfigError, match=expected):
        load_config(tmp_path)


def test_strict_validity_and_its_thresholds_are_read(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, """
[thresholds]
validity = "strict"
clock_difference = 0.1
slowdown_fraction = 0.05
"""))
    rules = config.thresholds.validity_rules()
    assert (rules.mode, rules.clock_difference, rules.slowdown_fraction) == ("strict", 0.1, 0.05)
    assert load_config(tmp_path / "elsewhere").thresholds.validity == "comparable"  # the default


@pytest.mark.parametrize(("written", "kind", "value"), [
    ('"GPU-BB9154E7-4d32-33d5-30c4-d6bc4498ea20"', "uuid", "GPU-bb9154e7-4d32-33d5-30c4-d6bc4498ea20"),
    ('"0000:1b:00.0"', "pci", "00000000:1B:00.0"),
    ('"1B:00.0"', "pci", "00000000:1B:00.0"),
    ("1", "index", "1"),
    ('"3"', "index", "3"),
    ('"MIG-5c8a2f1e-6b7d-5e0f-9a1b-2c3d4e5f6a7b"', "mig", "MIG-5c8a2f1e-6b7d-5e0f-9a1b-2c3d4e5f6a7b"),
])
def test_the_gates_can_be_pinned_to_a_gpu_by_uuid_pci_bus_id_or_nvml_index(
        tmp_path: Path, written: str, kind: str, value: str) -> None:
    config = load_config(write(tmp_path, f"[gates]\ndevice = {written}\n\n[gates.bench]\ntimeout_s = 900\n"))
    assert config.pinned_gpu is not None
    assert (config.pinned_gpu.kind, config.pinned_gpu.value) == (kind, value)
    assert config.pinned_gpu_where.endswith("cockpit.toml:2")
    assert config.gate("bench").timeout_s == 900 and list(config.gates) == ["bench"]


def test_a_box_at_its_power_cap_can_tolerate_it_and_settle_longer(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, """
[thresholds]
tolerated_clock_events = ["power cap"]
sm_clock_fraction = 0.75

[workload]
settle_ms = 250
rounds = 3
"""))
    assert config.thresholds.tolerated_clock_events == ("power cap",)
    assert config.thresholds.sm_clock_fraction == 0.75
    assert (config.workload.settle_ms, config.workload.rounds) == (250, 3)


def test_an_unknown_template_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown session template 'fast' \(allowed: baseline, optimize\)"):
        load_config(tmp_path).template("fast")


def test_the_reference_cockpit_toml_in_the_repository_is_exactly_the_defaults() -> None:
    """The committed cockpit.toml documents every key; it must stay equal to the defaults."""
    from dataclasses import replace

    from cockpit.config import Config

    loaded = load_config(Path(__file__).resolve().parents[1])
    defaults = Config()
    for name in ("templates", "default_template", "status_every_s", "thresholds",
                 "profile", "gpu_cost_per_hour", "gates"):
        assert getattr(loaded, name) == getattr(defaults, name), name
    # the one key that is not a default: this repository's example workload
    assert replace(loaded.workload, module="") == defaults.workload
    assert loaded.workload.module == "workloads/attention/attention.py"
    # [tune.space] lists every knob of the example workload with all its declared values (a knob
    # not named keeps them all), so it narrows nothing
    declared = (Path(__file__).resolve().parents[1] / "workloads" / "attention" / "attention.py").read_text()
    for name, values in loaded.tune.space.items():
        assert f'_knob("{name}", ' in declared and repr(tuple(values)) in declared, name
    assert replace(loaded.tune, space={}) == defaults.tune


@pytest.mark.parametrize("key", ["head_dims", "seq_lens", "batch", "heads", "dtype", "causal"])
def test_an_attention_shape_key_in_tune_says_it_moved_to_the_workload(tmp_path: Path, key: str) -> None:
    write(tmp_path, f"[tune]\nbudget_min = 5\n{key} = 1\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    said = str(caught.value)
    assert f"cockpit.toml:3: tune.{key}:" in said and "tune_grid" in said and "\n" not in said


def test_a_table_cockpit_does_not_know_lists_every_top_level_key(tmp_path: Path) -> None:
    write(tmp_path, "gpu_cost_per_hour = 1\n\n[tuning]\ntrials = 3\n")
    with pytest.raises(ConfigError, match=r"cockpit\.toml:3: tuning: unknown key \(allowed here: cadence, "
                       r"default_template, gates, gpu_cost_per_hour, profile, sanitize, templates, thresholds, tune, "
                       r"workload\)"):
        load_config(tmp_path)


def test_the_gates_hand_the_workload_probe_the_workload_cockpit_toml_names(tmp_path: Path) -> None:
    from cockpit.config import Config
    from cockpit.errors import CockpitError
    from cockpit.gates.bench.gate import BenchGate
    from cockpit.gates.correctness.gate import CorrectnessGate
    from cockpit.gates.gate import GateContext

    write(tmp_path, '[workload]\nmodule = "workloads/softmax.py"\nreps = 40\n')
    ctx = GateContext(tmp_path, tmp_path / "s", "001-x", config=load_config(tmp_path))
    argv = CorrectnessGate().argv(ctx)
    assert argv[2] == "correctness" and argv[argv.index("--workload") + 1] == "workloads/softmax.py"
    bench = BenchGate().argv(ctx)
    assert bench[2] == "bench" and bench[bench.index("--reps") + 1] == "40"
    with pytest.raises(CockpitError, match=r"no workload named: add \[workload\] module"):
        CorrectnessGate().argv(GateContext(tmp_path, tmp_path / "s", "001-x", config=Config()))
