// Compile-time stub of androidx.work.OneTimeWorkRequest. Never shipped.
// https://developer.android.com/reference/androidx/work/OneTimeWorkRequest.Builder
// (Builder(Class<? extends ListenableWorker>), setExpedited(OutOfQuotaPolicy) since 2.7, setInputData(Data), build())
package androidx.work;

public final class OneTimeWorkRequest {
    private OneTimeWorkRequest() {}

    public static final class Builder {
        public Builder(Class<? extends ListenableWorker> workerClass) {}

        public Builder setExpedited(OutOfQuotaPolicy policy) {
            return this;
        }

        public Builder setInputData(Data inputData) {
            return this;
        }

        public OneTimeWorkRequest build() {
            return new OneTimeWorkRequest();
        }
    }
}
