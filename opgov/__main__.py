from opgov.cli.main import run

run()
