// Compile-time stub of androidx.work.Data. Never shipped.
// https://developer.android.com/reference/androidx/work/Data (getString(String); Builder: putString(String, String), build())
package androidx.work;

public final class Data {
    private Data() {}

    public String getString(String key) {
        throw new UnsupportedOperationException("stub");
    }

    public static final class Builder {
        public Builder putString(String key, String value) {
            return this;
        }

        public Data build() {
            return new Data();
        }
    }
}
