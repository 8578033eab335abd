import os
import sys
from pathlib import Path

from hypothesis import settings

# Property tests explore the same examples on every run, so a CI result can be
# reproduced; HYPOTHESIS_PROFILE=explore searches afresh each time.
settings.register_profile("navkit", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "navkit"))

sys.path.insert(0, str(Path(__file__).resolve().parent))
