"""Pages to look at: one run, or the statistics of many, each one self-contained HTML file
(inline CSS and SVG, no script, nothing loaded) whose text from records is inert."""

from omg.pages.runpage import RunView, run_page
from omg.pages.statspage import stats_page

__all__ = ["RunView", "run_page", "stats_page"]
