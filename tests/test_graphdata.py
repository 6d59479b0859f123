"""The graph data's TypedDicts name exactly the keys the schemas allow, so typed reads of a
schema-checked graph, fragment or snapshot cannot drift from what the schemas accept."""

import json
from pathlib import Path

import pytest

from omg import graphdata
from omg.graph.schema import graph_schema

SCHEMAS = Path(__file__).parents[1] / "schemas"
GRAPH = graph_schema()  # a resolved graph's: use: and with: are spliced away before typed reads
FRAGMENT = json.loads((SCHEMAS / "fragment.schema.json").read_text())
DEFS = GRAPH["$defs"]


@pytest.mark.parametrize(
    ("typed", "properties"),
    [
        (graphdata.GraphData, GRAPH["properties"]),
        (graphdata.NodeData, DEFS["node"]["properties"]),
        (graphdata.InputSpecData, DEFS["inputSpec"]["properties"]),
        (graphdata.WorktreeData, DEFS["worktreeSpec"]["properties"]),
        (graphdata.VerifyData, DEFS["verify"]["properties"]),
        (graphdata.SuccessCheckData, DEFS["successCheck"]["properties"]),
        (graphdata.RetryData, DEFS["retry"]["properties"]),
        (graphdata.BackoffData, DEFS["backoff"]["anyOf"][1]["properties"]),
        (graphdata.FeedbackData, DEFS["feedback"]["properties"]),
        (graphdata.FragmentData, FRAGMENT["properties"]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_each_graph_data_type_names_exactly_the_keys_its_schema_allows(
    typed: type, properties: dict[str, object]
) -> None:
    assert set(typed.__annotations__) == set(properties)
    assert not typed.__required_keys__  # every key is optional: defaults fill what is absent
