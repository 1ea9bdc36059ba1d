# a misspelt option is named with the option meant
"$MASKKIT" attn-stats any.h5 --max-ofset 3
