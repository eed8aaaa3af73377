// Compile-time stub of android.security.keystore.KeyGenParameterSpec (API 23). Never shipped.
// https://developer.android.com/reference/android/security/keystore/KeyGenParameterSpec.Builder
// (Builder(String keystoreAlias, int purposes), setAlgorithmParameterSpec(AlgorithmParameterSpec), setBlockModes(String...),
// setEncryptionPaddings(String...), setKeySize(int), build())
package android.security.keystore;

public final class KeyGenParameterSpec implements java.security.spec.AlgorithmParameterSpec {
    public static final class Builder {
        public Builder(String keystoreAlias, int purposes) {}

        public Builder setAlgorithmParameterSpec(java.security.spec.AlgorithmParameterSpec spec) {
            return this;
        }

        public Builder setBlockModes(String... blockModes) {
            return this;
        }

        public Builder setEncryptionPaddings(String... paddings) {
            return this;
        }

        public Builder setKeySize(int keySize) {
            return this;
        }

        public KeyGenParameterSpec build() {
            return new KeyGenParameterSpec();
        }
    }
}
