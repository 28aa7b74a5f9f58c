"""Moved to :mod:`trainers.llm.recipe.corrections`; this name re-exports it for one release."""

import sys
import warnings

if __name__ == "__main__":  # python -m trainers.llm.corrections runs the moved module
    import runpy

    runpy.run_module("trainers.llm.recipe.corrections", run_name="__main__", alter_sys=True)
else:
    from trainers.llm.recipe import corrections as _moved

    warnings.warn("trainers.llm.corrections moved to trainers.llm.recipe.corrections", DeprecationWarning, stacklevel=2)
    sys.modules[__name__] = _moved  # the same module object: attributes set on either name are one
