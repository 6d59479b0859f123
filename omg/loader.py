"""Graph loading (interim: YAML → model without the schema; the full loader replaces this file)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from omg.errors import GraphError
from omg.model import Graph, graph_from_data


def load_graph(path: Path) -> Graph:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise GraphError(f"{path}: {exc}") from None
    return graph_from_data(data)


def graph_from_snapshot(data: Mapping[str, Any], source: str) -> Graph:
    return graph_from_data(data)
