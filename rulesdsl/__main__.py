from rulesdsl.tools.cli import run

run()
