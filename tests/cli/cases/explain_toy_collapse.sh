# the mode-collapse toy with the defaults reproduces the paper's Fig. 6:
# UNAS is one cluster after 4 steps, DNAS keeps the two modes
"$MASKKIT" explain --toy collapse
