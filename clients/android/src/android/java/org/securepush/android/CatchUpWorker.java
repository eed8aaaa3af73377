package org.securepush.android;

import android.content.Context;
import androidx.work.Worker;
import androidx.work.WorkerParameters;
import org.securepush.client.FetchedNotification;
import org.securepush.client.SecurePushException;

/** After FCM deleted pending messages: shows the unread notifications, each fetched and marked read. */
public final class CatchUpWorker extends Worker {
    public CatchUpWorker(Context context, WorkerParameters parameters) {
        super(context, parameters);
    }

    @Override
    public Result doWork() {
        try {
            for (FetchedNotification notification : SecurePushAndroid.client(getApplicationContext()).catchUp(50)) {
                SecurePushAndroid.presenter().showFetched(notification);
            }
            return Result.success();
        } catch (SecurePushException e) {
            return e.isTransient() ? Result.retry() : Result.failure();
        }
    }
}
