"""The crowd *modes* the scenario suite compares: a registry other code plugs into.

A mode says how an agent is configured for the crowd: a function from the
scenario's agent (:class:`~navkit.crowd.AgentParams`: size, speed) to the mode's
agent (typically the same with another ``avoidance_type`` or ``update_flags``),
and optionally a crowd setup run once before agents are added (installing
avoidance parameters). Adding a mode is one line::

    register_mode("ttc", lambda p: replace(p, avoidance_type=4),
                  setup=lambda crowd: crowd.set_obstacle_avoidance_params(4, TTC))

The built-in modes are RecastDemo CrowdTool's four dtCrowd presets (low,
medium, good, high quality: avoidance params 0..3 from
``Crowd.use_recastdemo_presets``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from navkit.crowd.agents import AgentParams
from navkit.errors import InputError

__all__ = ["Mode", "MODES", "register_mode", "get_mode", "DEFAULT_MODES"]


@dataclass(frozen=True)
class Mode:
    """A named crowd configuration.

    Attributes
    ----------
    name : str
    agent : callable(AgentParams) -> AgentParams
        The mode's agent from the scenario's agent.
    setup : callable(Crowd) -> None, optional
        Run once on a new crowd before its agents are added.
    description : str
    """

    name: str
    agent: Callable[[AgentParams], AgentParams]
    setup: Callable[..., None] | None = None
    description: str = ""

    def configure(self, crowd, params: AgentParams) -> AgentParams:
        """The agent params of this mode (``setup`` is run by the suite, once per crowd)."""
        out = self.agent(params)
        if not isinstance(out, AgentParams):
            raise InputError(f"mode {self.name!r}: agent() must return an AgentParams")
        return out


#: name -> Mode, in registration order (the order of the comparison tables)
MODES: dict[str, Mode] = {}


def register_mode(
    name: str,
    agent: Callable[[AgentParams], AgentParams],
    setup: Callable[..., None] | None = None,
    description: str = "",
    *,
    replace_existing: bool = False,
) -> Mode:
    """Add a mode to :data:`MODES` (InputError when the name is taken, unless
    ``replace_existing``); returns it."""
    if not isinstance(name, str) or not name:
        raise InputError("mode name must be a non-empty string")
    if not callable(agent) or (setup is not None and not callable(setup)):
        raise InputError("agent (and setup, when given) must be callable")
    if name in MODES and not replace_existing:
        raise InputError(f"a mode named {name!r} is already registered")
    m = Mode(name, agent, setup, description)
    MODES[name] = m
    return m


def get_mode(name: str) -> Mode:
    try:
        return MODES[name]
    except KeyError:
        raise InputError(f"no mode named {name!r}; modes: {', '.join(MODES)}") from None


def _presets(crowd) -> None:
    crowd.use_recastdemo_presets()


def _preset(i: int) -> Callable[[AgentParams], AgentParams]:
    def agent(p: AgentParams) -> AgentParams:
        return replace(p, avoidance_type=i)

    return agent


for _i, _q in enumerate(("low", "medium", "good", "high")):
    register_mode(
        f"dtcrowd-{_q}",
        _preset(_i),
        _presets,
        f"dtCrowd, RecastDemo's '{_q}' obstacle avoidance preset ({_i})",
    )

#: the modes every suite run includes unless told otherwise
DEFAULT_MODES = ("dtcrowd-low", "dtcrowd-medium", "dtcrowd-good", "dtcrowd-high")
