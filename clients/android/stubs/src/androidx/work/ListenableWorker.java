// Compile-time stub of androidx.work.ListenableWorker. Never shipped.
// https://developer.android.com/reference/androidx/work/ListenableWorker
// (ListenableWorker(Context, WorkerParameters), getApplicationContext(), getInputData(), getRunAttemptCount();
// Result.success(), Result.retry(), Result.failure())
package androidx.work;

import android.content.Context;

public abstract class ListenableWorker {
    public ListenableWorker(Context appContext, WorkerParameters workerParams) {}

    public final Context getApplicationContext() {
        throw new UnsupportedOperationException("stub");
    }

    public final Data getInputData() {
        throw new UnsupportedOperationException("stub");
    }

    public final int getRunAttemptCount() {
        throw new UnsupportedOperationException("stub");
    }

    public abstract static class Result {
        public static Result success() {
            throw new UnsupportedOperationException("stub");
        }

        public static Result retry() {
            throw new UnsupportedOperationException("stub");
        }

        public static Result failure() {
            throw new UnsupportedOperationException("stub");
        }
    }
}
