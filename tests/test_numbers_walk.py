"""`dbx_ai_infra.sources.numbers`: the one-walk check of a resource's numeric fields refuses exactly what the
field-by-field walk (`_values`, which names the field in the error) finds not a number."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB
from dbx_ai_infra.sources import numbers

_LEAVES = st.one_of(st.none(), st.integers(-5, 5), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from(["3", "2.5", "many", "", "${var.n}"]), st.booleans())
_KEYS = st.sampled_from(["num_workers", "autoscale", "min_workers", "max_workers", "autotermination_minutes",
                         "aws_attributes", "first_on_demand", "spot_bid_price_percent", "new_cluster", "tasks",
                         "job_clusters", "max_retries", "timeout_seconds", "other"])
_VALUES = st.recursive(_LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(_KEYS, inner, max_size=5)), max_leaves=25)


def _field_by_field(kind: str, props: dict) -> bool:
    return all(numbers._is_number(value) for field in numbers.NUMERIC_FIELDS[kind]
               for _, value in numbers._values(props, field.split("."), ""))


@settings(max_examples=400, deadline=None)
@given(kind=st.sampled_from([CLUSTER, JOB]), props=st.dictionaries(_KEYS, _VALUES, max_size=6))
def test_the_one_walk_check_agrees_with_the_field_by_field_walk(kind: str, props: dict) -> None:
    assert numbers._tree_numbers(props, numbers._TREES[kind]) == _field_by_field(kind, props)


def test_a_word_under_a_list_of_tasks_is_refused_with_its_path() -> None:
    job = {"tasks": [{"new_cluster": {"num_workers": 2}}, {"new_cluster": {"autoscale": {"max_workers": "many"}}}]}
    with pytest.raises(InputError) as caught:
        numbers.check_numbers(JOB, job, "jobs[0]", "export.json")
    assert "jobs[0].tasks[1].new_cluster.autoscale.max_workers" in str(caught.value)
    numbers.check_numbers(JOB, {"tasks": [{"new_cluster": {"num_workers": "3"}}]}, "jobs[0]", "export.json")


def test_a_field_that_is_also_the_object_of_another_cannot_be_listed() -> None:
    with pytest.raises(ValueError, match="also the object of another"):
        numbers._tree((("autoscale",), ("autoscale", "min_workers")))
