from groundwire.cli.main import main

main()
