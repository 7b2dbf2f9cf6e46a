from nanlint.cli import main

main()
