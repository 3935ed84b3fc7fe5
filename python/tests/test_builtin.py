"""The built-in ops and the module-level calls (the library calls the CLI commands make)."""

import threading

import pytest

import tunekit

SHAPE = {"m": 64, "n": 64, "k": 64}


def small_tuner(**options):
    return tunekit.Tuner(budget_evals=3, confirm_pairs=4, **options)


def test_sgemm_on_a_small_shape_reports_its_winner():
    report = small_tuner().tune("sgemm", shape=SHAPE)
    d = report.to_dict()
    assert report.source == "searched" and d["source"] == "searched"
    assert d["winner"] == report.winner and d["key"] == "m=64,n=64,k=64,dtype=f32"
    assert any(c["winner"] for c in d["candidates"])
    assert all(c.status for c in report.candidates)


def test_check_every_candidate_checks_each_one_measured_ok():
    report = tunekit.Tuner(check_every_candidate=True, store="none").tune(
        "softmax", shape="rows=64,cols=512")
    measured = [c for c in report.candidates if c.ok]
    assert len(measured) >= 2
    assert all(c.checked for c in measured), [(c.name, c.checked) for c in measured]
    assert [c.checked for c in report.candidates] == [
        c["checked"] for c in report.to_dict()["candidates"]]


def test_cache_ls_lists_what_was_tuned_and_a_new_tuner_replays_it():
    winner = small_tuner().tune("sgemm", shape="m=64,n=64,k=64").winner
    stored = tunekit.cache.ls()
    assert [(s["op"], s["key"], s["winner"]) for s in stored] == [
        ("sgemm", "m=64,n=64,k=64,dtype=f32", winner)]
    again = small_tuner().tune("sgemm", m=64, n=64, k=64)
    assert (again.source, again.winner) == ("cache_replay", winner)


def test_cache_ls_of_an_unreachable_server_never_shows_its_password():
    with pytest.raises(tunekit.UsageError) as raised:
        tunekit.cache.ls(store="postgresql://me:pa55word@127.0.0.1:1/db")
    assert "postgresql://me:***@127.0.0.1:1/db" in str(raised.value)
    assert "pa55word" not in str(raised.value)


def test_cache_ls_of_a_store_not_created_yet_is_empty(tmp_path):
    assert tunekit.cache.ls(store=f"sqlite:{tmp_path / 'nothing.db'}") == []
    with pytest.raises(tunekit.UsageError, match="no persistent store"):
        tunekit.cache.ls(store="none")


def test_bad_arguments_raise_the_librarys_message():
    tuner = small_tuner()
    with pytest.raises(tunekit.UsageError, match="nosuchop") as unknown:
        tuner.tune("nosuchop", shape=SHAPE)
    assert "sgemm" in str(unknown.value)  # the known names are listed
    with pytest.raises(tunekit.UsageError, match="bad shape 'm=-4,n=64,k=64' for sgemm"):
        tuner.tune("sgemm", shape={"m": -4, "n": 64, "k": 64})
    with pytest.raises(tunekit.UsageError, match="key fields"):
        tuner.tune("sgemm", shape={"rows": 3})
    with pytest.raises(tunekit.UsageError, match="off"):
        tunekit.Tuner(mode="sometimes")
    with pytest.raises(tunekit.UsageError, match="unknown option 'bogus'"):
        tunekit.Tuner(bogus=1)
    with pytest.raises(tunekit.UsageError, match=r"budget_evals=-3\): give an int >= 0"):
        tunekit.Tuner(budget_evals=-3)
    with pytest.raises(tunekit.UsageError, match="threads"):
        tunekit.Tuner(threads=-1)
    with pytest.raises(tunekit.UsageError):
        tunekit.Tuner(strategy="nosuchstrategy").tune("sgemm", shape=SHAPE)
    with pytest.raises(tunekit.UsageError, match=r"shape=\{...\} or as keywords, not both"):
        tuner.tune("sgemm", shape=SHAPE, m=3)


def test_the_gil_is_released_while_a_builtin_op_is_tuned():
    done = threading.Event()
    thread = threading.Thread(target=lambda: (small_tuner().tune("sgemm", shape=SHAPE),
                                              done.set()))
    thread.start()
    spins = 0
    while not done.is_set():  # runs only while the tuning thread does not hold the GIL
        spins += 1
    thread.join()
    assert spins > 1000


def test_explain_ranks_without_measuring(tmp_path):
    explained = tunekit.explain("sgemm", shape=SHAPE)
    assert explained["op"] == "sgemm" and len(explained["candidates"]) > 1
    assert tunekit.cache.ls() == []  # nothing measured, nothing stored


def test_ops_lists_the_catalog():
    names = [o["name"] for o in tunekit.ops()]
    assert "sgemm" in names and "softmax" in names


def test_space_counts_a_t1_file(repo):
    space = tunekit.space(repo / "data/spaces/convolution_milo.json", limit=2)
    assert space["valid"] == 4362 and len(space["configs"]) == 2
    assert set(space["configs"][0]) == set(space["parameters"])


def test_replay_searches_a_recorded_space(repo):
    result = tunekit.replay(repo / "data/convolution_milo/A100.json.gz", strategy="random",
                            budget_evals=20, seed=3)
    assert 1 <= result["evaluations"] <= 21
    assert 0 < result["fraction_of_optimum"] <= 1
    assert isinstance(result["report"], tunekit.Report) and result["report"].candidates
    with pytest.raises(tunekit.UsageError):
        tunekit.replay(repo / "data/convolution_milo/A100.json.gz", strategy="nosuch")


def test_calibrate_writes_a_profile_explain_then_uses(tmp_path):
    profile = tunekit.calibrate(quick=True, out=tmp_path / "host.json")
    assert (tmp_path / "host.json").is_file() and profile["path"].endswith("host.json")
    assert profile["envelope"]["threads"] >= 1
    explained = tunekit.explain("sgemm", shape=SHAPE, profile=str(tmp_path / "host.json"))
    assert "host.json" in explained["envelope_origin"]


def test_a_report_carries_its_final_pairings():
    d = small_tuner().tune("sgemm", shape=SHAPE).to_dict()
    for field in ("tie_pairing", "anchor_pairing"):
        d.pop(field, None)
        assert getattr(tunekit.Report(d), field) is None
        d[field] = {"rival": "algo=openblas,threads=2", "candidate": "algo=ikj",
                    "pairs": 10, "ratio": 1.5, "ratio_high": 1.6,
                    "kept_candidate": False, "why": "not under 0.98"}
        pairing = getattr(tunekit.Report(d), field)
        assert pairing["rival"] == "algo=openblas,threads=2" and not pairing["kept_candidate"]


def test_a_report_says_what_its_final_race_timed_again():
    # In memory: a second tune of the key would otherwise serve the first one's stored choice.
    report = small_tuner(finalist_band=10.0, store="none").tune("sgemm", shape=SHAPE)
    race = report.final_race
    assert race is not None
    finals = [c for c in report.candidates if c.finalist]
    if race["finalists"]:
        assert len(finals) == race["finalists"] >= 2 and race["search_pick"]
        assert all(c.search_score > 0 and c.ok for c in finals)
    else:
        assert race["note"] and not finals
    off = small_tuner(finalists=0, store="none").tune("sgemm", shape=SHAPE)
    assert off.final_race["note"] == "off (finalists 0)"
    assert not any(c.finalist for c in off.candidates)
    with pytest.raises(tunekit.UsageError, match="at least 2"):
        small_tuner(finalists=1)


def test_a_report_says_where_the_host_ran_the_cpus():
    report = small_tuner(store="none").tune("sgemm", shape=SHAPE)
    placement = report.cpu_placement
    # The CPU device reads the round trip between two of its CPUs; a one-CPU machine cannot.
    if placement is not None:
        assert placement["before_ns"] > 0 and placement["after_ns"] > 0
    d = report.to_dict()
    d["search"]["cpu_placement"] = {"before_ns": 55.0, "after_ns": 320.0, "waits": 1}
    assert tunekit.Report(d).cpu_placement == {"before_ns": 55.0, "after_ns": 320.0, "waits": 1}
    d.pop("search")
    assert tunekit.Report(d).cpu_placement is None


def test_a_report_says_how_sure_its_decision_is():
    report = small_tuner().tune("sgemm", shape=SHAPE)
    confidence = report.confidence
    assert confidence is not None and confidence["verdict"]
    if confidence["runner_up"]:
        assert confidence["runner_up"] != report.winner and confidence["advantage"] > 0
    d = report.to_dict()
    d.pop("search")
    assert tunekit.Report(d).confidence is None
