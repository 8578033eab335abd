"""Standard crowd scenarios, the figures that judge them, and the crowd modes they compare.

>>> from navkit import scenarios
>>> r = scenarios.run_scenario("circle", "dtcrowd-good", scale=0.5)  # doctest: +SKIP
>>> r.metrics.arrival_fraction, r.metrics.overlap_worst           # doctest: +SKIP

``python -m navkit.scenarios --table docs/scenarios.md`` runs every scenario
with every mode of :data:`MODES` and writes the comparison table;
``navkit crowd --scenario NAME`` runs one. See :mod:`navkit.scenarios.suite`
for the scenarios and :mod:`navkit.scenarios.modes` to add a mode.
"""

from .metrics import ScenarioMetrics, scenario_metrics
from .modes import DEFAULT_MODES, MODES, Mode, get_mode, register_mode
from .suite import HUMAN, SCENARIOS, ScenarioResult, Setup, get_scenario, run_scenario

__all__ = [
    "MODES", "DEFAULT_MODES", "Mode", "register_mode", "get_mode", "SCENARIOS",
    "ScenarioResult", "Setup", "get_scenario", "run_scenario", "ScenarioMetrics",
    "scenario_metrics", "HUMAN",
]  # fmt: skip
