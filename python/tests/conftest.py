# The plugin's own tests run pytest sessions of their own (pytester), each
# as a user's would: a subprocess of the installed package.
pytest_plugins = ["pytester"]
