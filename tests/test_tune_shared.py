"""A tune across boxes: `[tune] storage` names a database (PostgreSQL; SQLite for one box) and the
workers of several boxes, each in its own checkout, share one study per group of the workload's
knob search in it. Two boxes derive the same study name and meet there; a box of another GPU model,
or of another search, is refused in one line; the seed is queued once; a resumed run fails its own
trials and stale ones, never another box's live trial; together the boxes find the fastest
configuration without timing a wrong one or measuring anything twice, each building its variants
into its own workspace. The database is a real PostgreSQL started for these tests
(tests/pg_cluster.py); only the variant build and the GPU are stand-ins (tests/tune_fakes.py)."""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import optuna
import pytest

from cockpit.config import ConfigError, load_config
from cockpit.errors import CockpitError
from cockpit.tune import launch
from cockpit.tune.build import BuildPool, Built
from cockpit.tune.plan import PLAN_NAME, KnobPlan, read_plan
from cockpit.tune.search import Walk, choices, open_study, search, store_of
from cockpit.tune.space import Variant, label
from cockpit.tune.storage import SIDECAR, claim_gpu, owner_of
from cockpit.tune.target import Gpu
from cockpit.tune.trials import config_of
from tests.pg_cluster import Cluster, free_port, running_cluster
from tests.test_tune_knobs import FASTEST, KWARGS, SPEED, WRONG, FakeChild, knob_plan
from tests.tune_fakes import NAMES, SEED_TRIALS, TILES, every_config, fastest, outcome, tile_plan

REPO = Path(__file__).resolve().parent.parent
BOX = REPO / "tests" / "fixtures" / "tune" / "box.py"
State = optuna.trial.TrialState


def workspace(ws: Path, storage: str, extra: str = "") -> Path:
    """A box's checkout: its cockpit.toml naming the study's store (none: the session's journal)."""
    ws.mkdir(parents=True, exist_ok=True)
    lines = ["[tune]", *([f'storage = "{storage}"'] if storage else []), extra]
    (ws / "cockpit.toml").write_text("\n".join(lines) + "\n")
    return ws


def start(ws: Path, storage: str, extra: str = "", **plan: Any) -> tuple[KnobPlan, list[str]]:
    """`cockpit tune` in box `ws` up to its workers: the plan written, the studies created or joined."""
    said: list[str] = []
    return launch.new_run(workspace(ws, storage, extra), tile_plan(**plan), said.append), said


@pytest.fixture(scope="module")
def pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("pg")) as cluster:
        yield cluster


_dbs = itertools.count()


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database: SQLite (anywhere) or the PostgreSQL cluster (skipped where none)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tune.db'}"
    cluster: Cluster = request.getfixturevalue("pg")
    return cluster.create_db(f"tune{os.getpid()}x{next(_dbs)}")


# --- cockpit.toml --------------------------------------------------------------------------------

@pytest.mark.parametrize("url", ["postgresql://cockpit@db-host:5432/cockpit_tune",
                                 "postgresql+psycopg2://cockpit:pw@10.0.0.5/cockpit_tune",
                                 "sqlite:///build/tune.db", ""])
def test_a_database_url_is_read(tmp_path: Path, url: str) -> None:
    (tmp_path / "cockpit.toml").write_text(f'[tune]\nstorage = "{url}"\nstudy = "h100 team"\n')
    tune = load_config(tmp_path).tune
    assert (tune.storage, tune.study) == (url, "h100 team")


@pytest.mark.parametrize(("value", "said"), [
    ('"mysql://u:s3cret@db/tune"', "'mysql://u:***@db/tune' is not a database URL cockpit can share a study "
                                   "through (expected \"postgresql://user@host:5432/db\""),
    ('"postgres://u:s3cret@db/tune"', "'postgres://u:***@db/tune': write postgresql://"),
    ('"postgresql://u:s3cret@db:fivefour/tune"', "'postgresql://u:***@db:fivefour/tune': Port could not be cast"),
    ('"postgresql://u:s3cret@db:5432"', "'postgresql://u:***@db:5432' names no database: add /dbname"),
    ('"db-host:5432/tune"', "'db-host:5432/tune' is not a database URL"),
    ('"sqlite://tune.db"', "'sqlite://tune.db': name the file, e.g. sqlite:///build/tune.db"),
    ("5432", "must be a string"),
])
def test_a_bad_database_url_names_its_line_and_never_the_password(tmp_path: Path, value: str, said: str) -> None:
    (tmp_path / "cockpit.toml").write_text(f"[tune]\ntrials = 10\nstorage = {value}\n")
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path)
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'cockpit.toml'}:3: tune.storage: ") and said in message, message
    assert "s3cret" not in message and "\n" not in message


def test_a_database_out_of_reach_is_one_line_without_the_password(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    url = f"postgresql://cockpit:s3cret@127.0.0.1:{port}/cockpit_tune"
    with pytest.raises(CockpitError) as err:
        start(tmp_path, url)
    message = str(err.value)
    assert "s3cret" not in message and "\n" not in message and "Traceback" not in message
    if importlib.util.find_spec("psycopg") is None and importlib.util.find_spec("psycopg2") is None:
        assert message == (f"the tune database at postgresql://cockpit:***@127.0.0.1:{port}/cockpit_tune needs "
                           "its Python driver: pip install -e '.[tune-db]' (psycopg[binary])")
        return
    assert message.startswith(f"cannot reach the tune database at postgresql://cockpit:***@127.0.0.1:{port}/"
                              "cockpit_tune: "), message
    assert f'connection to server at "127.0.0.1", port {port} failed: Connection refused' in message
    assert message.endswith(
        "is PostgreSQL running there and listening on that address (listen_addresses, a pg_hba.conf line for "
        "this box), and does the database exist (createdb)?")
    assert not (tmp_path / "sessions" / "s1" / "tune" / PLAN_NAME).exists()


# --- meeting in one study -------------------------------------------------------------------------

def waiting(study: optuna.Study) -> list[dict[str, Any]]:
    return [t.system_attrs["fixed_params"] for t in study.get_trials(states=(State.WAITING,))]


def as_params(config: tuple[Any, ...]) -> dict[str, Any]:
    return dict(zip(NAMES, config, strict=True))


def test_two_boxes_derive_one_study_and_the_second_queues_no_seed_again(tmp_path: Path, db: str) -> None:
    plan_a, first = start(tmp_path / "a", db)
    plan_b, second = start(tmp_path / "b", db, run="tune-20231114-221400")
    [group] = plan_a.groups
    study = open_study(plan_a, group, store_of(tmp_path / "a", plan_a))
    assert study.study_name == open_study(plan_b, plan_b.groups[0], store_of(tmp_path / "b", plan_b)).study_name
    assert study.study_name.startswith("cockpit knobs tiles D=64 sm_90 #")
    assert len(group.seeds) == SEED_TRIALS
    assert sorted(map(str, waiting(study))) == sorted(str(as_params(c)) for c in group.seeds)  # once, not twice
    [said_a], [said_b] = first, second
    assert said_a.startswith(f"study {study.study_name!r} in ") and said_b.startswith(said_a.split(": ")[0])
    assert said_a.endswith(f": {SEED_TRIALS} seed configurations queued") and "joined" not in said_a
    assert said_b.endswith(f": joined, 0 configurations measured there already; 0 of this box's {SEED_TRIALS} "
                           "seed configurations queued (the others are queued or measured already)")
    sidecar = json.loads((tmp_path / "b" / plan_b.run_dir / SIDECAR).read_text())
    assert sidecar["studies"] == [study.study_name] and sidecar["storage"].split(":")[0] in ("sqlite", "postgresql")
    assert study.user_attrs["search"] == study.study_name.rpartition("#")[2]


def test_a_study_named_by_hand_refuses_a_box_whose_search_differs(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tune.db'}"
    plan_a, _ = start(tmp_path / "a", url, 'study = "team"')
    store = store_of(tmp_path / "a", plan_a)
    assert open_study(plan_a, plan_a.groups[0], store).study_name == "team knobs D=64"
    with pytest.raises(CockpitError) as err:  # the same group, timed on other shapes
        start(tmp_path / "b", url, 'study = "team"', seq_lens=(2048,))
    assert str(err.value).startswith(f"study 'team knobs D=64' in {url} was started for another search (its "
                                     "shapes, dtype, knob values or GPU arch differ from this box's)")
    assert "\n" not in str(err.value)
    assert not (tmp_path / "b" / plan_a.run_dir / PLAN_NAME).exists()


def test_a_box_of_another_gpu_model_is_refused_before_its_workers_start(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tune.db'}"
    a, b = tmp_path / "a", tmp_path / "b"
    plan_a, _ = start(a, url)
    store_a = store_of(a, plan_a)
    claim_gpu(open_study(plan_a, plan_a.groups[0], store_a), "H100 80GB HBM3", store_a)  # a's workers ran
    plan_b, _ = start(b, url)

    def ticked() -> None:
        raise AssertionError("no worker should have started")

    with pytest.raises(CockpitError) as err:
        launch.run_workers(b, plan_b, [Gpu(0, "GPU-b0", "H100 PCIe", "sm_90")], b / "logs", ticked)
    message = str(err.value)
    assert message.startswith("study 'cockpit knobs tiles D=64 sm_90 #") and "\n" not in message
    assert message.endswith("holds measurements from H100 80GB HBM3 and this GPU is H100 PCIe: a study never "
                            "mixes GPU models; give this box a study of its own ([tune] study = \"...\" in its "
                            "cockpit.toml) or run it on H100 80GB HBM3")
    assert not (b / "logs").exists()  # no worker, no log
    assert read_plan(b / plan_b.run_dir / PLAN_NAME).segments == ()  # no budget spent
    # the same model as torch names it (the measuring child's `device`) is the same model
    store_b = store_of(b, plan_b)
    study = open_study(plan_b, plan_b.groups[0], store_b)
    claim_gpu(study, "NVIDIA H100 80GB HBM3", store_b)
    with pytest.raises(CockpitError, match="this GPU is NVIDIA H100 PCIe"):
        claim_gpu(study, "NVIDIA H100 PCIe", store_b)
    with pytest.raises(CockpitError) as mixed:
        launch.run_workers(b, plan_b, [Gpu(0, "GPU-b0", "H100 80GB HBM3", "sm_90"),
                                       Gpu(1, "GPU-b1", "H200", "sm_90")], b / "logs", ticked)
    assert str(mixed.value) == ("these GPUs are different models (GPU 0: H100 80GB HBM3; GPU 1: H200): tune one "
                                "model at a time with --gpus, a study never mixes GPU models")
    assert not (b / "logs").exists()


def test_a_search_resumed_on_another_store_is_refused_not_split(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tune.db'}"
    a, b = tmp_path / "a", tmp_path / "b"
    plan_a, _ = start(a, url)
    workspace(a, "")
    with pytest.raises(CockpitError, match=r"this search's studies are in sqlite:///.* and cockpit.toml has no "
                                           r"\[tune\] storage now: put it back"):
        launch.resume_run(a, a / plan_a.run_dir, None, None)
    plan_b, _ = start(b, "")
    workspace(b, url)
    with pytest.raises(CockpitError, match=r"this search keeps its studies in .*journal\.log; cockpit\.toml now names"):
        launch.resume_run(b, b / plan_b.run_dir, None, None)
    workspace(a, url)  # put back: it resumes
    resumed, notes = launch.resume_run(a, a / plan_a.run_dir, 120.0, None)
    assert (resumed.run, resumed.budget_s, notes) == (plan_a.run, 120.0, [])


# --- the heartbeat ---------------------------------------------------------------------------------

def test_a_resumed_run_fails_its_own_trials_and_stale_ones_never_another_boxs_live_one(
        tmp_path: Path, db: str) -> None:
    ws = tmp_path / "a"
    plan, _ = start(ws, db)
    [group] = plan.groups
    # a beat a second, stale after 4 s: a busy box may hold the live box's beat, or the resume's
    # look, back a second or two without either mistaking a live trial for a dead one
    quick = replace(store_of(ws, plan), heartbeat_s=1, grace_s=4)
    offered = choices(plan, group)

    def worker(owner: str) -> tuple[optuna.Study, optuna.Trial]:
        study = open_study(plan, group, quick.asking(owner))
        trial = study.ask()
        for name in NAMES:
            trial.suggest_categorical(name, offered[name])
        return study, trial

    mine_study, mine = worker(owner_of(plan.run_dir, plan.run))  # this box's run, killed (-9)
    live_study, live = worker("box-b 20261124-0900-b2c3-tiles tune-20261124-090102")  # another box, alive
    dead_study, dead = worker("box-c 20261124-0901-c3d4-tiles tune-20261124-090155")  # a third box, gone
    mine_study.beat.drop(mine._trial_id)  # type: ignore[attr-defined]
    dead_study.beat.drop(dead._trial_id)  # type: ignore[attr-defined]

    resumed, notes = launch.resume_run(ws, ws / plan.run_dir, None, None)  # at once: only its own is known dead
    assert notes == ["D=64: 1 configurations interrupted mid-measurement, queued again"]
    states = {t.number: t.state for t in live_study.get_trials()}
    assert (states[mine.number], states[live.number], states[dead.number]) == (State.FAIL, State.RUNNING,
                                                                               State.RUNNING)
    assert mine.params in waiting(live_study)

    time.sleep(quick.grace_s + 1.5)  # the dead box's heartbeat goes stale; the live one's beats on
    asked = live_study.ask()  # a live worker sweeps stale trials as it asks
    states = {t.number: t.state for t in live_study.get_trials()}
    assert (states[live.number], states[dead.number]) == (State.RUNNING, State.FAIL)
    assert dead.params in [*waiting(live_study), config_of(live_study.get_trials()[asked.number], NAMES)]
    for study, trial in ((live_study, live), (live_study, asked)):
        study.tell(trial, state=State.FAIL)
    assert resumed.run == plan.run


# --- two boxes, two processes ----------------------------------------------------------------------

def step(ws: Path, what: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    return subprocess.Popen([sys.executable, str(BOX), str(ws), what], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finished(proc: subprocess.Popen[str]) -> tuple[str, str]:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    return out, err


def test_two_boxes_in_two_workspaces_find_the_fastest_and_measure_nothing_twice(
        tmp_path: Path, pg: Cluster) -> None:
    url = pg.create_db("two_boxes")
    boxes = [workspace(tmp_path / "box-a", url), workspace(tmp_path / "box-b", url)]
    finished(step(boxes[0], "plan"))
    _, said = finished(step(boxes[1], "plan"))
    assert "joined" in said and f"0 of this box's {SEED_TRIALS} seed configurations queued" in said
    for proc in [step(ws, "work") for ws in boxes]:  # side by side
        finished(proc)
    got = [json.loads((ws / "box.json").read_text()) for ws in boxes]
    assert all(g["measured"] > 0 for g in got), "one box did all the work"

    checked = [name for g in got for op, name in g["calls"] if op == "check"]
    assert len(checked) == len(set(checked)), "a configuration was measured twice"
    by_label = {label(TILES, c): c for c in every_config()}
    timed = {name for g in got for op, name in g["calls"] if op in ("short", "full")}
    assert not {c for c in checked if outcome(by_label[c]) == "incorrect"} & timed, "an incorrect one was timed"

    plan = read_plan(boxes[0] / "sessions" / "s-box-a" / "tune" / PLAN_NAME)
    [group] = plan.groups
    study = open_study(plan, group, store_of(boxes[0], plan))
    trials = study.get_trials()
    settled = [t for t in trials if t.user_attrs.get("outcome") not in (None, "skipped", "unused")]
    configs = [tuple(t.params[n] for n in NAMES) for t in settled]
    assert len(configs) == len(set(configs)) and set(configs) == set(group.feasible) | {group.current}
    assert {t.user_attrs["outcome"] for t in settled} >= {"timed", "incorrect", "crashed", "failed"}
    assert not [t for t in trials if t.state in (State.RUNNING, State.WAITING)]
    best = max((t for t in trials if t.state == State.COMPLETE), key=lambda t: t.value or 0.0)
    assert tuple(best.params[n] for n in NAMES) == fastest()
    assert {t.user_attrs["gpu"] for t in settled} == {"box-a", "box-b"}  # both measured
    assert study.user_attrs["gpu"] == "Fake H100"

    for ws, g in zip(boxes, got, strict=True):  # each box built into its own workspace
        cache = Path(g["cache"])
        assert cache == ws / "build" / "tune"
        assert sorted(p.name.removeprefix("tiles_ext_v") for p in cache.iterdir()) == sorted(set(g["compiled"]))
        journal = (ws / "sessions" / f"s-{ws.name}" / "journal.jsonl").read_text()
        assert str(tmp_path / ("box-b" if ws.name == "box-a" else "box-a")) not in journal
    assert not any("/build/" in json.dumps(t.user_attrs) for t in trials)


# --- a workload's knobs ------------------------------------------------------------------------------

def test_two_boxes_share_a_knob_search_and_measure_each_configuration_once(tmp_path: Path, pg: Cluster) -> None:
    url = pg.create_db("knobs")
    walks = []
    for name in ("a", "b"):
        ws = tmp_path / name
        ws.mkdir()
        (ws / "cockpit.toml").write_text(f'[tune]\nstorage = "{url}"\n')
        plan = replace(knob_plan(tuple(SPEED), (1, 4), {}), run_dir=f"sessions/{name}/tune",
                       session_journal=f"sessions/{name}/journal.jsonl", run=f"tune-20231114-22132{name == 'b'}")
        launch.new_run(ws, plan)
        walks.append((ws, plan))
    [(ws_a, plan_a), (ws_b, plan_b)] = walks
    group = plan_a.groups[0]
    study = open_study(plan_a, group, store_of(ws_a, plan_a))
    assert study.study_name == open_study(plan_b, plan_b.groups[0], store_of(ws_b, plan_b)).study_name
    assert study.study_name.startswith("cockpit knobs row-softmax all sm_90 #")
    assert len(waiting(study)) == len(group.seeds)

    def build_one(v: Variant) -> Built:
        raise AssertionError("kwarg knobs have nothing to build")

    children: list[FakeChild] = []
    done: list[int] = []

    def one_box(ws: Path, plan: Any) -> None:
        child, pool = FakeChild(), BuildPool(build_one, workers=1)
        children.append(child)
        ticks = itertools.count()
        walk = Walk(plan, plan.groups[0], pool, child, lambda e: None,  # type: ignore[arg-type]
                    lambda: 1_700_000_100.0 + next(ticks), float("inf"), ws.name)
        store = store_of(ws, plan).asking(owner_of(plan.run_dir, plan.run))
        try:
            done.append(search(open_study(plan, plan.groups[0], store), walk))
        finally:
            pool.close()

    threads = [threading.Thread(target=one_box, args=w) for w in walks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(done) == 2
    checked = [r[1] for c in children for r in c.requests if r[0] == "check"]
    assert len(checked) == len(set(checked)) == len(SPEED) == sum(done), "a configuration was measured twice"
    assert not [r for c in children for r in c.requests if r[0] == "time" and r[1] == WRONG]
    best = max(study.get_trials(states=(State.COMPLETE,)), key=lambda t: t.value or 0.0)
    assert (best.params["ROWS"], best.params["num_warps"]) == FASTEST
    assert [k.name for k in KWARGS] == list(best.params)
