# positional reads several datasets, named by --position, --query, --key...,
# not by FILE.h5:/PATH
cp "$(dirname "$0")/../fixtures/model.h5" model.h5 || exit 1
"$MASKKIT" positional model.h5:/bert/embeddings --heads 2
