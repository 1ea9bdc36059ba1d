# --json: the settings and the cluster counts after each step
"$MASKKIT" explain --toy collapse --steps 2 --seed 3 --json
