# float probabilities thresholded at 0.5, then at 0.25 (every column important)
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
"$MASKKIT" axis f.h5 --rows probs/rows --cols /probs/cols --csv - --by sample || exit 1
"$MASKKIT" axis f.h5 --rows probs/rows --cols /probs/cols --csv - --by sample --threshold 0.25
