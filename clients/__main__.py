from arena.clients.cli import main

raise SystemExit(main())
