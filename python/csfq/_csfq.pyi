"""The native module: the simulator, returning JSON text (see csfq/__init__.py)."""

from typing import List, Optional

__version__: str
__build__: str

class ScenarioError(ValueError):
    """A scenario that failed to load."""

    file: str
    line: int
    column: int
    field: Optional[str]
    message: str

class SimulationError(RuntimeError):
    """A run that could not be built or finished."""

def run(text: str, file: str, discipline: Optional[str] = None, seed: Optional[int] = None, long: bool = False) -> str: ...
def read_scenario(path: str) -> str: ...
def check(text: str, file: str) -> str: ...
def maxmin(text: str, file: str) -> str: ...
def experiments() -> str: ...
def reproduce(id: str, seed: Optional[int] = None) -> str: ...
def disciplines() -> List[str]: ...
def drop_reasons() -> List[str]: ...
