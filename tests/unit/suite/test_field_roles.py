"""Each workload field declares its role once; the lists the rest of specbench uses derive."""

from __future__ import annotations

import pytest

from specbench.suite.model import (
    HASH_NEUTRAL_WORKLOAD_DEFAULTS,
    IDENTITY_FIELDS,
    MEASURED_FIELDS,
    NOT_IDENTITY,
    STOPPING_FIELDS,
    WORKLOAD_FIELDS_OUT_OF_HASH,
    WorkloadSpec,
    fields_where,
    output_fit_error,
)


def test_every_field_declares_a_known_role():
    for name, info in WorkloadSpec.model_fields.items():
        declared = info.json_schema_extra
        assert isinstance(declared, dict), name
        assert declared["role"] in {"cells", "compared", "selection", "measured", "unmeasured"}
    assert len(fields_where()) == len(WorkloadSpec.model_fields)


def test_the_derived_lists_are_the_ones_written_by_hand_before():
    # As main 7b6eecf wrote them out (suite/model.py, run/plan.py, run/pilot.py).
    # + launches, added since: how many fresh server starts measure the cells; and
    # max_launches, the cap on a precision-targeted point's launches.
    assert {"name", "concurrency", "repeats", "launches", "max_launches"} == NOT_IDENTITY
    assert WORKLOAD_FIELDS_OUT_OF_HASH == ("launches", "max_launches")
    assert set(MEASURED_FIELDS) == {
        "dataset", "num_prompts", "max_tokens", "temperature", "api", "ignore_eos", "seed",
        "dataset_revision", "extra_body", "history",
    }  # fmt: skip
    assert HASH_NEUTRAL_WORKLOAD_DEFAULTS == {
        "per_chunk_usage": True,
        "history": "streamed_text",
        "precision": None,
        "min_conversations": None,
        "full_set_concurrency": None,
        "accept_partial": False,  # added since: which rows of a partial prepared config
    }
    assert STOPPING_FIELDS == ("precision", "min_conversations", "full_set_concurrency")
    # What blocks a resume: everything but the cell choosers and what changes no figure.
    assert set(IDENTITY_FIELDS) == set(WorkloadSpec.model_fields) - NOT_IDENTITY - {
        "tokenizer", "strict", "save_outputs", "request_timeout_s",
    }  # fmt: skip


def test_without_stopping_turns_every_stopping_setting_off():
    spec = WorkloadSpec(
        dataset="mt-bench", concurrency=[1, 8], max_tokens=8, precision=0.02,
        min_conversations=4, full_set_concurrency=8,
    )  # fmt: skip
    off = spec.without_stopping()
    assert [getattr(off, name) for name in STOPPING_FIELDS] == [None, None, None]
    assert off.model_dump(exclude=set(STOPPING_FIELDS)) == spec.model_dump(
        exclude=set(STOPPING_FIELDS)
    )


@pytest.mark.parametrize(("max_tokens", "limit", "fits"), [(63, 64, True), (64, 64, False)])
def test_the_context_rule_is_one_function(max_tokens: int, limit: int, fits: bool):
    error = output_fit_error(max_tokens, limit, field="max_tokens", server="server 'base'")
    assert (error is None) == fits
    assert output_fit_error(max_tokens, None, field="max_tokens", server="x") is None
    if not fits:
        assert error == (
            "max_tokens = 64 leaves no room for a prompt in max_model_len = 64 of server "
            "'base': every request would be rejected; allowed: below 64"
        )
