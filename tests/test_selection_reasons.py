"""Why a record is left out of the tables (reports/selection.py), said so that a user can act on it."""

from pibench.reports.selection import select_current


def record(task_id: str, data: str, started: str) -> dict:
    return {"task_id": task_id, "suite": "s", "dataset": "covid", "method": "cfrnn", "setting": "default",
            "alpha": 0.1, "seed": 0, "status": "ok", "started_at": started, "config": {"seed": 0, "epochs": 5},
            "identity": {"code": "v1", "data": data}}


def test_a_record_of_the_same_seed_on_other_data_is_left_out_saying_the_data_differ():
    """Two runs of one entry from two data directories (an edited copy, the published file): the newer is shown,
    and the older's reason names the data, not only 'same configuration, code and seed'."""
    chosen, left_out = select_current([record("old", "fp-a", "2026-01-01"), record("new", "fp-b", "2026-01-02")],
                                      "v1")
    assert [r["task_id"] for r in chosen] == ["new"]
    (out,) = left_out
    assert out.task_id == "old" and "superseded by task new" in out.reason and "its data differ" in out.reason
    _, same_data = select_current([record("old", "fp-a", "2026-01-01"), record("new", "fp-a", "2026-01-02")], "v1")
    assert same_data[0].reason == "superseded by task new (same configuration, code and seed)"
