# '&' binds tighter than '+': local1+global1&causal = local1 + (global1 & causal)
"$MASKKIT" gen 'local1+global1&causal' --n 5 && echo && "$MASKKIT" gen '(local1+global1)&causal' --n 5
