"""Debug drawing: arrays in, pictures out. No core module imports this package.

:mod:`navkit.debug.render` draws top-down pictures with matplotlib (an optional
dependency, ``pip install navkit[render]``).
"""
