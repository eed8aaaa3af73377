// Compile-time stub of androidx.work.Worker. Never shipped.
// https://developer.android.com/reference/androidx/work/Worker (Worker(Context, WorkerParameters), abstract Result doWork(),
// run on a background thread)
package androidx.work;

import android.content.Context;

public abstract class Worker extends ListenableWorker {
    public Worker(Context context, WorkerParameters workerParams) {
        super(context, workerParams);
    }

    public abstract Result doWork();
}
