from .jobs.cli import main

main()
