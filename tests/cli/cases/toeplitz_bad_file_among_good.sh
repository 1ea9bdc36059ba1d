# one bad file among good ones: its error on stderr, the others analysed,
# exit 2; '{dir}' names the pictures of same-named files apart
fix="$(dirname "$0")/../fixtures"
mkdir v1 v2 && cp "$fix/model.h5" v1/tf_model.h5 && cp "$fix/model.h5" v2/tf_model.h5 || exit 1
"$MASKKIT" toeplitz v1/tf_model.h5 "$fix/plain.h5" v2/tf_model.h5 --png 'P-{dir}.png' > out 2> err
[ $? = 2 ] || { echo "expected exit 2"; exit 1; }
[ "$(wc -l < out)" = 3 ] || { echo "expected a header and 2 rows"; cat out; exit 1; }
[ "$(wc -l < err)" = 1 ] && grep -q "plain.h5': no 2-D dataset matches" err || { cat err; exit 1; }
ls P-*.png
