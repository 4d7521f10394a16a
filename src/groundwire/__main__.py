from groundwire.cli import main

main()
