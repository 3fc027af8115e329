from relplan.cli import main

main()
