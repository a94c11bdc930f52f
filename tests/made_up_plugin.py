"""A plugin, as a package would ship one (FDBU_PLUGINS=made_up_plugin, or an entry point of group "fdbu.plugins"):
importing it registers the made-up family (tests/made_up_family/) and the made-up command (tests/made_up_command.py).
`FDBU_PLUGINS=made_up_plugin make test` runs the whole suite with both registered in every process (conftest.py
puts tests/ on PYTHONPATH): the tests read the registries, so nothing pins fdbu's own commands and releases."""
import made_up_command
import made_up_family

made_up_family.register()
made_up_command.register()
