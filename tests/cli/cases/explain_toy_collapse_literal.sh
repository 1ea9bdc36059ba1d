# the Gaussian-kernel reading with variance 0.1 (sd sqrt(0.1)): UNAS takes
# 6 steps to collapse with this seed, DNAS still ends with two clusters
"$MASKKIT" explain --toy collapse --score dist --sd 0.31622776601683794 --steps 7
